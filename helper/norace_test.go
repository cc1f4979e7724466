//go:build !race

package helper_test

// raceEnabled is true when the tests run with -race; the helper binary is then built with it too.
const raceEnabled = false
