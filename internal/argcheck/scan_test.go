package argcheck

import (
	"strings"
	"testing"
)

// testBounds are a few of the server's bounds, enough to exercise Scan.
var testBounds = Bounds{
	MaxItems:       256,
	MaxString:      map[string]int{"paneId": 64, "sessionName": 256, "keys": 256, "tool": 64, "text": 65536},
	MaxOtherString: 1024,
}

func TestScan(t *testing.T) {
	t.Parallel()
	many := "[" + strings.Repeat(`{"tool":"list_panes"},`, testBounds.MaxItems) + `{"tool":"list_panes"}]`
	cases := []struct {
		why, args, wantErr string
	}{
		{"small arguments", `{"paneId":"%1","text":"hi","keys":["Enter","C-c"]}`, ""},
		{"a name at its maximum", `{"sessionName":"` + strings.Repeat("n", 256) + `"}`, ""},
		{"a name over its maximum", `{"sessionName":"` + strings.Repeat("n", 257) + `"}`, "sessionName is 257 bytes long, over its limit: the most it takes is 256"},
		{"an id over its maximum", `{"paneId":"%` + strings.Repeat("9", 64) + `"}`, "paneId is 65 bytes long"},
		{"an argument not listed gets the default", `{"other":"` + strings.Repeat("x", testBounds.MaxOtherString+1) + `"}`, "other is 1025 bytes long"},
		{"a nested operation's argument, by its own name", `{"operations":[{"tool":"capture_pane","arguments":{"paneId":"` + strings.Repeat("%", 100) + `"}}]}`, "paneId is 100 bytes long"},
		{"an array's items, by the array's name", `{"keys":["` + strings.Repeat("k", 300) + `"]}`, "keys is 300 bytes long"},
		{"too many items", `{"operations":` + many + `}`, `"operations" has more than 256 items`},
		{"too many members", `{` + strings.Repeat(`"a":1,`, testBounds.MaxItems) + `"b":2}`, "more than 256 members"},
		{"numbers and booleans pass", `{"start":-100000,"end":null,"joinWrapped":true}`, ""},
	}
	for _, c := range cases {
		_, err := testBounds.Scan([]byte(c.args))
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s: %v; want no error", c.why, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%s: got %v; want %q", c.why, err, c.wantErr)
		case err != nil && len(err.Error()) > 400:
			t.Errorf("%s: error text is %d bytes; want it to quote little of the argument", c.why, len(err.Error()))
		}
	}
}

// TestScanLong: the strings longer than QuoteMax come back, to be
// shortened in error texts; ShortenQuotes cuts them at a character
// boundary, whether quoted as given or as %q writes them.
func TestScanLong(t *testing.T) {
	t.Parallel()
	v := strings.Repeat("é", 150) // 300 bytes
	long, err := testBounds.Scan([]byte(`{"text":"` + v + `","paneId":"%1"}`))
	if err != nil || len(long) != 1 || long[0] != v {
		t.Fatalf("Scan = %d long strings, %v; want the one text", len(long), err)
	}
	for _, text := range []string{"bad text " + v, "bad text \"" + v + "\""} {
		got := ShortenQuotes(text, long)
		want := strings.Repeat("é", 100) + "… (300 bytes)"
		if !strings.Contains(got, want) || strings.Contains(got, v) {
			t.Errorf("ShortenQuotes(%.40q…) = %q; want the argument as %q", text, got, want)
		}
	}
	if got := ShortQuote("short"); got != "short" {
		t.Errorf("ShortQuote(%q) = %q; want it unchanged", "short", got)
	}
}
