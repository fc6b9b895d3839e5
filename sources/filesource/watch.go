package filesource

// fileEvent is one change in a watched directory.
type fileEvent struct {
	// name is the changed path (the directory itself for its own events).
	name string
	// complete is set when the event says the change is whole: a file
	// renamed into the directory (an atomic write) or closed after writing.
	// Other changes may be half done: a create, a write, a rename away
	// (editors move the old file away before writing the new one) and an
	// unlink (tools unlink a file before creating it again).
	complete bool
	// op is what happened to the file at name, as far as the watcher can
	// tell (fileChurn reads it).
	op fileOp
	// cookie pairs the two halves of one rename (opMovedOut, opMovedIn);
	// zero when the watcher cannot tell.
	cookie uint32
}

// fileOp is the kind of a fileEvent.
type fileOp uint8

const (
	opOther    fileOp = iota // anything else: attributes, the directory's own events
	opWrite                  // created or written, and not yet closed
	opClosed                 // closed after writing
	opMovedIn                // renamed into the directory
	opMovedOut               // renamed away
	opRemoved                // unlinked
)

// watcher follows changes in directories. Its channels are closed when it
// is closed or breaks.
type watcher interface {
	add(dir string) error
	remove(dir string) error
	watching(dir string) bool
	events() <-chan fileEvent
	errors() <-chan error
	close() error
}
