package mcpserver

import (
	"strings"
	"testing"
)

func TestSplitCaptureDropsBlankBottomRows(t *testing.T) {
	got := splitCapture("a\n\nb\n   \n\n")
	if strings.Join(got, "|") != "a||b" {
		t.Errorf("splitCapture = %q", got)
	}
}
