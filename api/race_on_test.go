//go:build race

package api

// raceDetector tells whether the tests run under the race detector.
const raceDetector = true
