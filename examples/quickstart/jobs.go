package main

//go:generate go run github.com/jobgen/jobgen/cmd/jobgen

// SendWelcomeEmail emails a new user. It is tried three times, 100ms
// apart, before it fails for good.
//
//job:queue=emails tries=3 backoff=100ms timeout=5s
type SendWelcomeEmail struct {
	UserID int
	Email  string
}

// ResizeAvatar makes thumbnails of a user's avatar.
//
//job:timeout=10s
type ResizeAvatar struct {
	UserID int
	Sizes  []int
}

// NotifyTeam posts to the team's channel.
//
//job:queue=emails
type NotifyTeam struct {
	Message string
}
