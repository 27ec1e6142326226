package settings

import "strings"

// NoModelMessage says that no model is configured and how to configure
// one in the client the user is in, named by its initialize clientInfo
// (acp: an ACP client, which sends no settings).
// Every client can also use the environment or the config file, so those
// close every message.
func NoModelMessage(acp bool, client string) string {
	var how string
	switch {
	case acp:
		how = "ACP clients send no settings: set CLINE_LS_PROVIDER and CLINE_LS_MODEL in the agent's environment (the client's agent_servers entry)"
	case client == "Neovim":
		how = `in Neovim: require('cline').setup({ settings = { provider = { name = 'anthropic', model = '…', apiKeyEnv = 'ANTHROPIC_API_KEY' } } }), ` +
			"or init_options = { provider = {…} } in vim.lsp.start without the plugin"
	case client == "Eglot":
		how = `in Emacs: (setq cline-initialization-options '(:provider (:name "anthropic" :model "…" :apiKeyEnv "ANTHROPIC_API_KEY"))), ` +
			"or eglot-workspace-configuration with the same :provider plist without the package"
	case strings.HasPrefix(client, "Visual Studio Code"), client == "code-server", client == "VSCodium":
		how = "in VS Code: the settings cline.provider, cline.model and cline.apiKeyEnv (or cline.provider = replay with cline.transcript to try it offline)"
	case client == "cline-ls headless":
		how = "with flags: cline-ls exec --provider anthropic --model … --api-key-env ANTHROPIC_API_KEY"
	default:
		how = "set provider {name, model, apiKeyEnv} in initializationOptions"
	}
	return "no model is configured: " + how +
		"; or CLINE_LS_PROVIDER and CLINE_LS_MODEL, or $XDG_CONFIG_HOME/cline-ls/config.json, " +
		"or one of ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY in the environment"
}
