package runtime

// ScriptSHA returns the SHA1 of the embedded script name, so that tests
// can recognise its calls on the wire.
func ScriptSHA(name string) string {
	for _, s := range allScripts {
		if s.name == name {
			return s.sha
		}
	}
	panic("no script " + name)
}
