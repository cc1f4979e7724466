package mcpserver

// everyTool lists every tool of this build, one line each, in the order of
// the README's tables. Each constructor sits in its tool's file beside the
// handler; adding a tool is that file, its line here and its golden schema
// (schemas/). TestToolSpecs checks every spec: a malformed one fails
// a test, never a start.
func everyTool() []tool {
	return []tool{
		// Inspect
		getServerInfoTool(),
		listSessionsTool(),
		listWindowsTool(),
		listPanesTool(),
		getSessionInfoTool(),
		getWindowInfoTool(),
		getPaneInfoTool(),
		capturePaneTool(),
		captureSinceTool(),
		snapshotPaneTool(),
		searchPanesTool(),
		findPaneByPositionTool(),
		callReadToolsBatchTool(),
		showOptionTool(),
		showEnvironmentTool(),
		showHooksTool(),
		getTmuxVariablesTool(),
		// Manage
		createSessionTool(),
		createWindowTool(),
		splitWindowTool(),
		respawnPaneTool(),
		renameSessionTool(),
		renameWindowTool(),
		setPaneTitleTool(),
		resizePaneTool(),
		resizeWindowTool(),
		selectPaneTool(),
		selectWindowTool(),
		selectLayoutTool(),
		swapPaneTool(),
		moveWindowTool(),
		setMouseEnabledTool(),
		setHistoryLimitTool(),
		setSynchronizePanesTool(),
		// Execute
		runShellCommandTool(),
		waitForRunTool(),
		cancelRunTool(),
		listRunsTool(),
		waitForTextTool(),
		waitForChannelTool(),
		signalChannelTool(),
		sendKeysTool(),
		sendKeysBatchTool(),
		pasteTextTool(),
		// Teardown
		killPaneTool(),
		killWindowTool(),
		killSessionTool(),
		clearPaneScrollbackTool(),
		// Opt-in, in no toolset
		tmuxRunTool(),
		tmuxRunStartTool(),
	}
}

// catalog is every tool of this build by name. It is filled in init, not
// in its declaration, because handlers read it (a batch looks its
// operations up) and Go refuses that initialization cycle.
var catalog map[string]tool

func init() { catalog = catalogOf(everyTool()) }

func catalogOf(tools []tool) map[string]tool {
	m := make(map[string]tool, len(tools))
	for _, t := range tools {
		m[t.spec().name] = t
	}
	return m
}
