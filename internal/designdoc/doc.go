// Package designdoc holds no code: its test keeps docs/design.md's table of package imports
// equal to what `go list` says, so that the drawing of the house cannot drift from the code.
package designdoc
