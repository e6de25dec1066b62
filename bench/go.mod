module github.com/jobgen/jobgen/bench

go 1.26

require github.com/jobgen/jobgen v0.0.0

replace github.com/jobgen/jobgen => ../
