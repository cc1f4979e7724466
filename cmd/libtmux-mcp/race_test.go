//go:build race

package main

// raceEnabled: the test binary was built with -race, so the binary under
// test is too.
const raceEnabled = true
