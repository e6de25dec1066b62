// Package coalesce hands what queued up while the previous call was out
// to the next call, up to a bound: the worker's acker sends its acks
// this way (Loop, Hand), and its starter the held jobs it starts (Take).
// Under load a call carries many items; when idle, each goes alone and
// at once.
package coalesce
