package model

// Version is the store's stamp on a row: the index of the write
// transaction that created the row's object (a new UID, or a key taken by
// another source, is a new object) and of the last one that wrote it. The
// store sets both; a value built outside it carries zeros, which the store
// overwrites.
type Version struct {
	CreateIndex uint64
	ModifyIndex uint64
}

// Current returns v: through embedding, the version of any row that
// carries one.
func (v Version) Current() Version { return v }

// Set stamps v, in place, as written by the transaction at index,
// creating the object when created is set (or v has no creation yet): for
// a row that is not yet shared.
func (v *Version) Set(index uint64, created bool) {
	if created || v.CreateIndex == 0 {
		v.CreateIndex = index
	}
	v.ModifyIndex = index
}

// Versioned is a row that carries a Version.
type Versioned interface {
	Current() Version
	Set(index uint64, created bool)
}
