// Package benchkit holds what berth's benchmark commands (bench/cmd/...)
// share: the setup that builds berth, testapp and the test image; a berth
// subprocess and its HTTP endpoints; /proc readings; the machine and commit
// a report names. It is a tool package: berth's own packages never import
// it.
package benchkit
