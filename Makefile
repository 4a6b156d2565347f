# Gatehouse build. `make run` and `make test` work on a fresh Debian 12
# machine with Go and Node installed: they fetch what they need themselves,
# and doing so twice is harmless.

SHELL       := /bin/bash
GO          ?= go
export GOFLAGS := -buildvcs=false
export CGO_ENABLED := 1

FUZZTIME    ?= 5s
# package:FuzzTarget pairs run briefly by `make fuzz` (and so by `make test`).
FUZZ_TARGETS := \
	./backend/bundle:FuzzParseManifest \
	./backend/bundle:FuzzCheckSchema \
	./backend/bundle:FuzzValidateInvocation \
	./backend/bundle:FuzzValidateResult \
	./backend/bundle:FuzzScanImports \
	./backend/skills:FuzzParseFrontmatter \
	./backend/policy:FuzzParseExecution \
	./backend/policy:FuzzParseCaptureSettings

.PHONY: all build run test vet gotest nodetest fuzz bench deps clean

all: build

deps:
	@command -v $(GO) >/dev/null || { echo "Go 1.26+ is required" >&2; exit 1; }
	@command -v node >/dev/null || { echo "Node.js 20+ is required" >&2; exit 1; }
	@command -v gcc >/dev/null || { echo "gcc is required (cgo, go-sqlite3)" >&2; exit 1; }
	$(GO) mod download

## build: bin/gatehouse (CLI; browser mode once the UI lands)
build: deps
	$(GO) build -o bin/gatehouse .

## run: build, then show the bundled skills from the default data directory
run: build
	./bin/gatehouse skill list

## test: everything CI runs
test: vet gotest nodetest fuzz

vet: deps
	$(GO) vet ./...
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted" >&2; exit 1; fi

gotest: deps
	$(GO) test -race -count=1 ./...

nodetest:
	node --test test/bundles/

fuzz: deps
	@set -e; for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; name=$${t##*:}; \
	  echo "fuzz $$name ($$pkg, $(FUZZTIME))"; \
	  $(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg >/tmp/gatehouse-fuzz-$$name.log 2>&1 \
	    || { cat /tmp/gatehouse-fuzz-$$name.log; exit 1; }; \
	done

## bench: benchmarks reported side by side with their baselines
bench: deps
	$(GO) test -run '^$$' -bench . -benchtime 3s ./backend/artifact
	$(GO) test -run '^$$' -bench 'CheckedVsBare' -benchtime 100x -count 3 ./backend/runner
	PHASES=1 $(GO) test -count=1 -run PhaseTimes -v ./backend/runner | grep -E 'phase_test|ok'
	GATEHOUSE_SOAK=1 $(GO) test -count=1 -run NoLeaks -v ./backend/runner | grep -E 'attempts|ok|FAIL' 

clean:
	rm -rf bin
