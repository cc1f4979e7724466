package loopback

import "testing"

func TestCheckAddr(t *testing.T) {
	for _, c := range []struct {
		addr string
		ok   bool
		why  string
	}{
		{"127.0.0.1:8765", true, "IPv4 loopback"},
		{"127.0.0.2:0", true, "all of 127/8 is loopback; port 0 picks one"},
		{"[::1]:8765", true, "IPv6 loopback"},
		{"localhost:8765", true, "localhost listens on 127.0.0.1"},
		{"0.0.0.0:8765", false, "every interface"},
		{"[::]:8765", false, "every IPv6 interface"},
		{":8765", false, "an empty host is every interface"},
		{"192.168.1.5:8765", false, "a LAN address"},
		{"example.com:8765", false, "a name that may resolve anywhere"},
		{"localhost.example.com:80", false, "only localhost itself"},
		{"127.0.0.1", false, "no port"},
		{"127.0.0.1:http", false, "a named port"},
		{"127.0.0.1:70000", false, "port out of range"},
	} {
		err := CheckAddr(c.addr)
		if (err == nil) != c.ok {
			t.Errorf("CheckAddr(%q) = %v; want ok=%v (%s)", c.addr, err, c.ok, c.why)
		}
	}
}
