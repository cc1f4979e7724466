module github.com/libtmux/libtmux-mcp

go 1.26

require (
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/klauspost/cpuid/v2 v2.0.9 // indirect
	github.com/modelcontextprotocol/go-sdk v1.8.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	lukechampine.com/blake3 v1.4.1 // indirect
)
