package main

import "github.com/jobgen/jobgen/cmd/jobgen/internal/cli"

func main() { cli.Main() }
