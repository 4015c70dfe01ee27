# sluice: make help lists the targets.
.DEFAULT_GOAL := help
SHELL := /bin/bash

GO          ?= go
BIN         := bin/sluice
VERSION     ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS     := -X github.com/sluicemedia/sluice/internal/app.Version=$(VERSION)
GOLANGCI    := github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.6.2
FUZZTIME    ?= 60s
FUZZMINIMIZETIME ?= 5s
SOAK_CYCLES ?= 1000
SOAK_TRANSCODES ?= 100
# BENCHFLAGS are extra flags of cmd/sluice-bench, e.g. -baseline-bin PATH: the gosrt-based sluice
# build that srt-readers-50 compares with (without it the report shows the recorded figures).
BENCHFLAGS  ?=

.PHONY: help build run test lint fuzz bench soak deps ffmpeg console clean

# The web console's third-party files (hls.js, dash.js), copied from npm into the embedded folder
# by make console; build, run and test make them when missing. The last file the script copies
# stands for all of them.
CONSOLE_VENDOR := internal/console/ui/vendor/dash.js.LICENSE.txt

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-8s %s\n", $$1, $$2}'

build: $(CONSOLE_VENDOR) ## build bin/sluice (with the console's assets: make console when they are missing)
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/sluice

ffmpeg: ## install ffmpeg when it is missing (apt-get where available)
	@bash scripts/ensure-ffmpeg.sh

console: ## (re)install hls.js and dash.js from npm (package-lock.json) into the console's embedded assets
	@bash scripts/build-console.sh

$(CONSOLE_VENDOR): internal/console/web/package-lock.json
	@bash scripts/build-console.sh

run: ffmpeg build ## start the server on the embedded defaults (:8080, data in ./data)
	./$(BIN) serve

deps: ## install what the tests need: ffmpeg, Chromium, the browser players, MediaInfo, GStreamer, VLC, srt-tools, PostgreSQL
	@bash scripts/ensure-ffmpeg.sh
	@bash scripts/ensure-test-deps.sh

# The hostile-client suite (internal/hostile) judges the server's answer times and memory as a
# user sees them, so it runs alone, after the others and without the race detector (its server
# is the plain binary; every package it attacks is race-tested above).
test: deps $(CONSOLE_VENDOR) ## run every test (race detector on; the hostile-client suite after, alone)
	$(GO) test -race -count=1 -timeout 20m $$($(GO) list ./... | grep -v '/internal/hostile$$')
	$(GO) test -count=1 -timeout 20m ./internal/hostile/

lint: ## gofmt, go vet, go mod tidy -diff, golangci-lint
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt: $$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) mod tidy -diff
	$(GO) run $(GOLANGCI) run ./...

fuzz: ## run every fuzz target for FUZZTIME (default 60s) each, minimizing each new input for FUZZMINIMIZETIME (5s)
	@FUZZTIME=$(FUZZTIME) FUZZMINIMIZETIME=$(FUZZMINIMIZETIME) bash scripts/fuzz.sh

bench: ffmpeg build ## Go benchmarks of the hot paths, then sluice against ffmpeg (cmd/sluice-bench) into BENCHMARKS.md
	@mkdir -p bin/bench
	set -o pipefail; $(GO) test -run '^$$' -bench . -benchmem ./... | tee bin/bench/micro.txt
	$(GO) run ./cmd/sluice-bench -sluice $(BIN) -micro bin/bench/micro.txt -out BENCHMARKS.md $(BENCHFLAGS)

soak: ffmpeg build ## endurance test (minutes): SOAK_CYCLES publisher drops, SOAK_TRANSCODES transcoding restreams, leak checks
	$(GO) run ./cmd/sluice-soak -bin $(BIN) -cycles $(SOAK_CYCLES) -transcodes $(SOAK_TRANSCODES) $(SOAKFLAGS)

clean: ## remove build output (not ./data)
	rm -rf bin
