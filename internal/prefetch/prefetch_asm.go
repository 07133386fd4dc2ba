//go:build (amd64 || arm64) && !purego

package prefetch

//go:noescape
func line(p *byte)
