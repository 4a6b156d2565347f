module github.com/gatehouse/gatehouse

go 1.26.0

require (
	github.com/creack/pty v1.1.24
	github.com/evanw/esbuild v0.28.2
	github.com/google/uuid v1.6.0
	github.com/mattn/go-sqlite3 v1.14.53
	github.com/santhosh-tekuri/jsonschema/v5 v5.3.1
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/sys v0.50.0
)
