package main

//go:generate go tool jobgen

// SendWelcomeEmail emails a new user. It is tried up to three times,
// 100ms and then 200ms apart, and each attempt may take 30s; then it
// goes to the failed store.
//
//job:queue=emails tries=3 backoff=100ms,200ms timeout=30s
type SendWelcomeEmail struct {
	UserID int
	Email  string
}

// ResizeAvatar makes thumbnails of a user's avatar.
//
//job:queue=images timeout=10s
type ResizeAvatar struct {
	UserID int
	Sizes  []int
}

// NotifyTeam posts to the team's channel. It has no //job: keys, so it
// goes to the "default" queue with the worker's defaults.
//
// job:
type NotifyTeam struct {
	Message string
}
