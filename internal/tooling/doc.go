// Package tooling holds what the bench (internal/bench, make bench) and the soak
// (internal/soak, make soak) both need around the processes they drive: loopback ports free on
// TCP and UDP (Ports), and child processes in their own process group that are stopped with a
// signal and then killed (Proc, StopGroup), a child's log lines (Lines) and its output
// (SyncBuffer), the tools' stderr logger (Logger), and the API's recorded-file entry
// (RecordedFile, which the tests' testutil.API decodes too). It is tooling, not product code:
// sluice itself does not import it.
package tooling
