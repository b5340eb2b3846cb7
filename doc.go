// Package mxclaw is the root of the mx-claw module. It holds no code, only
// tests of the module as a whole (the layering of its packages). The
// program is cmd/mx-claw; its packages live under internal/.
package mxclaw
