package tools

// FetchDocText renders a parsed page as fetch_web_content does, for the
// test that compares our HTML reader with golang.org/x/net/html.
var FetchDocText = fetchDocText

// LSPToolsWaiting is LSPTools whose requests wait at most the given
// time, for the test of the bound.
var LSPToolsWaiting = lspToolsWith
