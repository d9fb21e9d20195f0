// Package layout holds no code: its test checks the package maps of README.md
// and docs/design.md against go list.
package layout
