// Package settings owns what configures a connection: the Settings shape
// (initializationOptions, didChangeConfiguration, the user's config file),
// their checks, and Resolve, the one function that says which settings are
// in force: the client's merged key by key over the environment, the
// config file (read once per Store) and the provider key variables. The
// Store keeps them copy-on-write, with the variables and secrets they
// hide from children and scrub from output.
//
// It also owns what the settings pick of a session's model: ModelSwitch,
// which takes a change of the settings from the next turn (Follow is the
// one rule for what a change does to a session's model), Models, the
// sessions' switches by id, ModelLists, the providers' listings cached
// per provider, address and key, ModelMenu, the order they are offered
// in, and NoModelMessage, how to configure a model in each client. They
// live here, not in provider, because they are keyed on ProviderSettings,
// which the model clients must not know of.
//
// It never imports rpc: the transport passes in how a refusal is answered.
package settings
