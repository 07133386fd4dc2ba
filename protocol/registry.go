package protocol

// requestTypes maps each API key to a constructor of its typed request, so a
// server (the fake broker) can decode any request it receives. Message files
// register themselves with registerRequest in an init function.
var requestTypes = map[ApiKey]func() Request{}

func registerRequest(newRequest func() Request) {
	requestTypes[newRequest().Key()] = newRequest
}

// NewRequest returns an empty request for key, or nil if the library does
// not implement that API.
func NewRequest(key ApiKey) Request {
	if f, ok := requestTypes[key]; ok {
		return f()
	}
	return nil
}

// FlexibleFrom returns the first flexible version of key's request, or -1.
func FlexibleFrom(key ApiKey) int16 {
	if r := NewRequest(key); r != nil {
		return r.FlexibleFrom()
	}
	return -1
}

// Implemented lists the API keys the library implements with their version
// ranges, as a broker would advertise them in ApiVersions.
func Implemented() Versions {
	vs := make(Versions, len(requestTypes))
	for k, f := range requestTypes {
		r := f()
		vs[k] = VersionRange{Min: r.MinVersion(), Max: r.MaxVersion()}
	}
	return vs
}
