package mcpserver

// addInspectTools registers the inspect toolset.
func (s *server) addInspectTools() {
	s.addServerInfo()
	s.addListTools()
	s.addInfoTools()
	s.addCapture()
}
