package mcpserver

// addInspectTools registers the inspect toolset.
func (s *server) addInspectTools() {
	s.addServerInfo()
	s.addListTools()
	s.addInfoTools()
	s.addCapture()
}

// addOptInTools registers the tools that belong to no toolset.
func (s *server) addOptInTools() {
	s.addTmuxRun()
}
