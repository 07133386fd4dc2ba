package fakebroker

type group struct{}
