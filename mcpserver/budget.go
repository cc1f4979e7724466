package mcpserver

import "github.com/libtmux/libtmux-mcp/internal/readbudget"

// budget bounds what one read returns (Limits.MaxResultLines and
// MaxResultChars); trimmed is a read it bounded, embedded in answers.
type (
	budget  = readbudget.Budget
	trimmed = readbudget.Trimmed
)
