package skills

import (
	"strconv"

	"github.com/gatehouse/gatehouse/backend/bundle"
	"go.yaml.in/yaml/v3"
)

// noNestedDuplicates reports a duplicate_key error, with its path, for
// every mapping below n (metadata, another host's fields) that names the
// same key twice, and reports whether there was none. yaml.v3 keeps both
// entries in a node tree, and later readers would silently take the last:
// docs/formats/skill-md.md makes duplicates an error at every depth. Alias nodes are
// not followed, so the walk visits each node once (linear in the file).
func noNestedDuplicates(p *parsed, n *yaml.Node, path string) bool {
	ok := true
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.MappingNode:
			seen := make(map[string]bool, len(n.Content)/2)
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				kp := path
				if k.Kind == yaml.ScalarNode {
					kp = bundle.JoinPath(path, k.Value)
					id := k.ShortTag() + "\x00" + k.Value
					if seen[id] {
						p.errorf("duplicate_key", kp, "key %q appears more than once in this mapping", k.Value)
						ok = false
					}
					seen[id] = true
				}
				walk(v, kp)
			}
		case yaml.SequenceNode:
			for i, e := range n.Content {
				walk(e, path+"["+strconv.Itoa(i)+"]")
			}
		}
	}
	walk(n, path)
	return ok
}
