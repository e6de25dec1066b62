// Package doccheck reads the project's Markdown the way GitHub renders
// it, so that tests can catch what a reader would trip on: a relative
// link to a file that is not there, or to a heading that is not there.
//
// # What it checks
//
// [Links] lists the links of a Markdown file, leaving out those inside
// code (fenced blocks and code spans) and those with a scheme
// (https:, mailto:). [Anchors] lists the anchors GitHub gives a file's
// headings ([Slug]), and [Check] resolves each relative link of a file
// against the repository: the file or directory must exist inside it,
// and a #fragment must name an anchor of the Markdown file it points to.
//
// Its tests run the checks on README.md, CHANGELOG.md and docs/*.md, and
// hold README.md to a front door: at most [MaxReadmeLines] lines, linking
// every guide in docs/, and naming the test command CI runs.
package doccheck
