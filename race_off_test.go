//go:build !race

package lore_test

// raceDetector is true in a build with the race detector, which multiplies memory
// use and time: checks of either skip there.
const raceDetector = false
