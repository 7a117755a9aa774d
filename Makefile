# ringd — build, run and test. Every target installs the Debian packages the
# build needs first (through sudo when not root), so a fresh machine works.

SWIFT ?= swift
APT_PACKAGES := pkg-config libssl-dev zlib1g-dev libsqlite3-dev libsystemd-dev libcurl4-openssl-dev nghttp2-server systemd tmux python3-venv prometheus coturn postgresql libpq-dev haproxy nodejs node-ws node-typescript
CONFIG ?= config.json

.PHONY: all deps build run test lint examples venv conformance clean

all: build

deps:
	@missing=""; \
	for package in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$package 2>/dev/null | grep -q "ok installed" || missing="$$missing $$package"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi; \
	  $$sudo apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends $$missing; \
	fi

build: deps
	$(SWIFT) build -c release

run: build
	.build/release/ringd --config $(CONFIG)

# ringd beside Kamailio on the same machine (bench/peer.sh, the peer in
# ../shared/peers/kamailio): CPU per call of both at PEER_RATE calls/s for
# PEER_SECONDS, and the ratio. kamailio and sip-tester are installed for
# this target only, like podman for the image.
PEER_PACKAGES := kamailio sip-tester
PEER_RATE ?= 2000
PEER_SECONDS ?= 10

.PHONY: bench-peer
bench-peer: deps
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(PEER_PACKAGES)"
	$(SWIFT) build -c release
	bench/peer.sh "$$($(SWIFT) build -c release --show-bin-path)" $(PEER_RATE) $(PEER_SECONDS)

# Cluster mode on a throw-away PostgreSQL (bench/cluster.sh; docs/BENCHMARKS.md,
# "Cluster on PostgreSQL"): 1 node, then 2 with callers on one and callees on
# the other, each a fixed-rate run at CLUSTER_RATE calls/s for CLUSTER_SECONDS
# over CLUSTER_PAIRS pairs, a --max search and a run offered more than it
# takes (its throughput), fsync on (CLUSTER_FSYNC="on off" adds the same with
# fsync off), then a profiling pass (node A's worker thread from /proc,
# pg_stat_statements, pg_stat_wal). postgresql is in APT_PACKAGES. About
# four minutes once built (eight with CLUSTER_FSYNC="on off").
CLUSTER_RATE ?= 50
CLUSTER_SECONDS ?= 10
CLUSTER_PAIRS ?= 50
CLUSTER_FSYNC ?= on

# The cluster's flood test alone (Tests/SignalServerTests/Cluster/ClusterAdmissionTests.swift):
# four accounts flooding at their rate limit, an honest pair's call setup p99 at most 100 ms.
# On a quiet machine only: beside other work the bound does not hold, and `make test` checks a looser one.
.PHONY: bench-flood
bench-flood: deps venv
	$(SWIFT) build --build-tests
	RINGD_FLOOD_P99_MS=100 $(SWIFT) test --skip-build --filter floodLeavesHonestSetupsFast

.PHONY: bench-cluster
bench-cluster: deps
	$(SWIFT) build -c release
	FSYNC="$(CLUSTER_FSYNC)" bench/cluster.sh "$$($(SWIFT) build -c release --show-bin-path)" $(CLUSTER_RATE) $(CLUSTER_SECONDS) $(CLUSTER_PAIRS)

# The OCI image (deploy/container/, docs/DEPLOY.md), built here with no
# registry. podman and buildah are installed for this target only, so
# `make test` stays lean.
IMAGE ?= localhost/ringd:latest
IMAGE_PACKAGES := podman buildah

.PHONY: image
image: deps
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(IMAGE_PACKAGES)"
	SWIFT=$(SWIFT) deploy/container/build.sh $(IMAGE)

# A self-signed development certificate for localhost in the data directory
# (data/tls-cert.pem, data/tls-key.pem); see the README for wss://.
.PHONY: cert
cert: build
	.build/release/ringd gen-cert --config $(CONFIG)

# docs/STATES.md, the call state machine's transition table, from
# `ringd states` (StateTableDocumentTests fails while it is stale).
.PHONY: states
states: deps
	$(SWIFT) build --product ringd
	"$$($(SWIFT) build --show-bin-path)/ringd" states > docs/STATES.md

# One run of every suite, then a few seconds of each fuzz target (so a
# broken target fails too). The run is bounded (TEST_TIMEOUT seconds, killing
# its whole process group) and line-buffered, so a test that hangs fails the
# run and the log shows which test had started and not finished. Suites that
# block run on threads of their own, not Swift's cooperative pool
# (Tests/TestSupport/DedicatedThread.swift). RingKit's tests run in a process
# of their own: RingClient's own tasks (opening, backoff, resume) run on the
# cooperative pool, which the rest of the run's tests can hold for a minute
# on two cores, longer than ringd lets a socket wait for its auth.
TEST_TIMEOUT ?= 900

test: deps venv lint
	$(SWIFT) build --build-tests
	timeout --kill-after=10 $(TEST_TIMEOUT) stdbuf -oL -eL $(SWIFT) test --skip-build --skip '^RingKitTests\.'
	timeout --kill-after=10 120 stdbuf -oL -eL $(SWIFT) test --skip-build --filter '^RingKitTests\.'
	$(MAKE) --no-print-directory contract-test
	$(MAKE) --no-print-directory examples
	$(MAKE) --no-print-directory browser-test
	$(MAKE) --no-print-directory node-test
	$(MAKE) --no-print-directory fuzz-smoke

# The formatter that ships with the toolchain, in its strictest mode, with
# the checked-in .swift-format (120 columns). `swift format -i -r` followed
# by the same paths fixes what it reports.
FORMAT_PATHS := Package.swift Sources Tests Fuzz/Package.swift Fuzz/Sources examples/swift

lint:
	$(SWIFT) format lint --strict --parallel -r $(FORMAT_PATHS)

# The Python example of an app's integration tests (examples/python: pytest
# and websockets against `ringd --ephemeral`); the Swift one is a test
# target, run with the suites above. Writes no cache into the tree.
examples: venv
	$(SWIFT) build --product ringd
	RINGD="$$($(SWIFT) build --show-bin-path)/ringd" PYTHONDONTWRITEBYTECODE=1 timeout --kill-after=10 300 \
		$(VENV)/bin/python -m pytest -q -p no:cacheprovider examples/python

# The published contract (docs/openapi.yaml, docs/asyncapi.yaml; Tests/Contract):
# both documents valid (OpenAPI 3.1, the AsyncAPI 3.0.0 JSON Schema), every
# example of docs/PROTOCOL.md valid against them, then a live `ringd
# --ephemeral` seeded over the WebSocket (each frame checked against
# asyncapi.yaml), /v1/ws's refusals and the test API probed, and a bounded
# Schemathesis run of every REST route (a few hundred cases, fixed seed,
# loopback). About half a minute once built.
.PHONY: contract-test
contract-test: venv
	$(SWIFT) build --product ringd
	PYTHONDONTWRITEBYTECODE=1 $(VENV)/bin/python Tests/Contract/check_documents.py
	RINGD="$$($(SWIFT) build --show-bin-path)/ringd" PYTHONDONTWRITEBYTECODE=1 timeout --kill-after=10 120 \
		$(VENV)/bin/python Tests/Contract/fuzz_rest.py

# The browser phone in two headless Chromium sessions (Tests/Browser,
# docs/PHONE.md): a video call through a local coturn's relay, a rejection
# and a cancellation, against `ringd --ephemeral`. chromium and its driver
# are installed for this target (coturn is in APT_PACKAGES already).
# Screenshots go to BROWSER_TEST_OUT.
BROWSER_PACKAGES := chromium chromium-driver coturn
BROWSER_TEST_OUT ?= .build/browser-test

.PHONY: browser-test
browser-test: venv
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(BROWSER_PACKAGES)"
	$(SWIFT) build --product ringd
	RINGD="$$($(SWIFT) build --show-bin-path)/ringd" BROWSER_TEST_OUT="$(BROWSER_TEST_OUT)" PYTHONDONTWRITEBYTECODE=1 \
		timeout --kill-after=10 240 $(VENV)/bin/python -m pytest -q -p no:cacheprovider Tests/Browser

# ringd-client.js in Node (Tests/Node, docs/WEB.md): its types checked by
# tsc --strict against an app's use of them, then node's test runner against
# a real `ringd --ephemeral`, with Debian's node-ws as the WebSocket (nodejs,
# node-ws and node-typescript are in APT_PACKAGES; NODE_PATH for a node built
# elsewhere, which does not look in /usr/share/nodejs). A few seconds.
.PHONY: node-test
node-test: deps
	tsc --noEmit --strict --target es2020 --lib es2020,dom --moduleResolution node Tests/Node/types.ts
	$(SWIFT) build --product ringd
	RINGD="$$($(SWIFT) build --show-bin-path)/ringd" NODE_PATH=/usr/share/nodejs timeout --kill-after=10 120 \
		node --test Tests/Node/ringd-client.test.mjs

# Two-party demo: ringd in the background (its log in a temporary file), bob
# answering and alice calling him in two tmux panes; ringd stops when the
# tmux session ends. Without tmux: the two commands to paste into two
# terminals, and ringd in the foreground until Ctrl-C.
.PHONY: demo
demo: build
	@tmp=$$(mktemp -d "$${TMPDIR:-/tmp}/ringd-demo.XXXXXX"); \
	if command -v tmux >/dev/null 2>&1; then log="$$tmp/ringd.log"; else log=/dev/stderr; fi; \
	.build/release/ringd --config $(CONFIG) > "$$tmp/ready" 2>> "$$log" & ringd=$$!; \
	trap 'kill -TERM $$ringd 2>/dev/null' INT TERM; \
	url=""; tries=0; \
	while [ -z "$$url" ] && [ $$tries -lt 100 ] && kill -0 $$ringd 2>/dev/null; do \
	  sleep 0.1; tries=$$((tries + 1)); url=$$(sed -n 's/^listening //p' "$$tmp/ready"); \
	done; \
	if [ -z "$$url" ]; then \
	  kill -TERM $$ringd 2>/dev/null; \
	  echo "ringd did not start$$([ -f "$$log" ] && echo ":" && cat "$$log")" >&2; exit 1; \
	fi; \
	echo "ringd listening at $$url (pid $$ringd)"; \
	if command -v tmux >/dev/null 2>&1; then \
	  hold='; status=$$?; echo; echo "ringctl exited with status $$status; press Enter to close this pane"; read _'; \
	  tmux kill-session -t ringd-demo 2>/dev/null; \
	  tmux new-session -d -s ringd-demo -x 160 -y 30 -e RINGCTL_SERVER=$$url \
	    ".build/release/ringctl --as bob answer$$hold" && \
	  tmux split-window -h -t ringd-demo -e RINGCTL_SERVER=$$url \
	    "sleep 1; .build/release/ringctl --as alice call bob$$hold" || { kill -TERM $$ringd; exit 1; }; \
	  (while tmux has-session -t ringd-demo 2>/dev/null; do sleep 1; done; kill -TERM $$ringd) >/dev/null 2>&1 & \
	  echo "ringd's log: $$log; it stops when the tmux session ringd-demo ends"; \
	  if [ -n "$$TMUX" ]; then tmux switch-client -t ringd-demo; else tmux attach-session -t ringd-demo; fi; \
	  if tmux has-session -t ringd-demo 2>/dev/null; then \
	    echo "ringd-demo runs on: tmux attach -t ringd-demo"; \
	  else \
	    wait $$ringd; \
	  fi; \
	else \
	  echo "tmux not found; paste these into two terminals:"; \
	  echo "  .build/release/ringctl --as bob answer"; \
	  echo "  .build/release/ringctl --as alice call bob"; \
	  [ "$$url" = "ws://127.0.0.1:8787" ] || echo "(with RINGCTL_SERVER=$$url)"; \
	  echo "Ctrl-C stops ringd."; \
	  wait $$ringd; wait $$ringd 2>/dev/null; \
	fi

# A Python virtual environment with packages from PyPI for the tests that
# check ringd against implementations other than ringd's: the Standard
# Webhooks library, which verifies ringd's webhook signatures
# (Tests/Webhooks/), and h2 and cryptography, which the mock APNs and FCM
# servers are made of (Tests/Push/), pytest for the Python example
# (examples/python/), LiveKit's token verifier (Tests/Media/), and the
# contract checks' validators and Schemathesis (Tests/Contract/). Made
# again only when a requirements file changes, so a second run costs
# nothing; a run that failed half-way leaves no stamp and starts afresh
# (--clear). One pip run installs every file, so their pins are resolved
# together.
VENV := .venv
VENV_REQUIREMENTS := Tests/Webhooks/requirements.txt Tests/Push/requirements.txt examples/python/requirements.txt Tests/Browser/requirements.txt Tests/Media/requirements.txt Tests/Contract/requirements.txt

venv: $(VENV)/.installed

$(VENV)/.installed: $(VENV_REQUIREMENTS) | deps
	python3 -m venv --clear $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check $(addprefix -r ,$(VENV_REQUIREMENTS))
	touch $@

conformance: deps
	$(SWIFT) build -c release --product ws-echo
	conformance/run.sh --binary .build/release/ws-echo

clean:
	rm -rf .build

# The default load profile (docs/BENCHMARKS.md), about three and a half minutes once built:
# ringbench spawns a fresh ringd for each of its three runs (free port,
# temporary store, raised limits), pinned to one CPU, and drives it from
# another: (a) 50 caller/callee pairs at 500 calls/s for 10 s, (b) a search
# for the highest rate with no failure, no missed slot and setup p99 < 50 ms,
# (c) 10,000 idle authenticated connections held 20 s (one ping round),
# then (a) and (c) again over TLS, with permessage-deflate offered, and with
# both (holding 5 s: the memory and set-up cost are what differ).
# On a one-CPU machine: make bench BENCH_SERVER_CPUS= BENCH_CLIENT_CPUS=
BENCH_SERVER_CPUS ?= 1
BENCH_CLIENT_CPUS ?= 0
BENCH_ARGS ?= --pairs 50 --rate 500 --duration 10
BENCH_MAX_ARGS ?= --max
BENCH_IDLE_ARGS ?= --connections 10000 --hold 20
BENCH_TRANSPORT_IDLE_ARGS ?= --connections 10000 --hold 5

.PHONY: bench
bench: deps
	$(SWIFT) build -c release
	@bin=$$($(SWIFT) build -c release --show-bin-path); \
	pin="$(if $(BENCH_SERVER_CPUS),--server-cpus $(BENCH_SERVER_CPUS)) $(if $(BENCH_CLIENT_CPUS),--client-cpus $(BENCH_CLIENT_CPUS))"; \
	status=0; \
	echo "== fixed rate: ringbench calls --spawn $$bin/ringd $$pin $(BENCH_ARGS)"; \
	"$$bin/ringbench" calls --spawn "$$bin/ringd" $$pin $(BENCH_ARGS) || status=1; \
	echo; echo "== highest passing rate: ringbench calls --spawn $$bin/ringd $$pin $(BENCH_MAX_ARGS)"; \
	"$$bin/ringbench" calls --spawn "$$bin/ringd" $$pin $(BENCH_MAX_ARGS) || status=1; \
	echo; echo "== idle connections: ringbench idle --spawn $$bin/ringd $$pin $(BENCH_IDLE_ARGS)"; \
	"$$bin/ringbench" idle --spawn "$$bin/ringd" $$pin $(BENCH_IDLE_ARGS) || status=1; \
	for transport in --tls --compress "--tls --compress"; do \
	  echo; echo "== fixed rate, $$transport: ringbench calls --spawn $$bin/ringd $$pin $$transport $(BENCH_ARGS)"; \
	  "$$bin/ringbench" calls --spawn "$$bin/ringd" $$pin $$transport $(BENCH_ARGS) || status=1; \
	  echo; echo "== idle connections, $$transport: ringbench idle --spawn $$bin/ringd $$pin $$transport $(BENCH_TRANSPORT_IDLE_ARGS)"; \
	  "$$bin/ringbench" idle --spawn "$$bin/ringd" $$pin $$transport $(BENCH_TRANSPORT_IDLE_ARGS) || status=1; \
	done; \
	exit $$status

# Call latency with a webhook receiver that answers at once, sleeps 10 s per
# request or refuses connections, against no webhooks (docs/BENCHMARKS.md,
# "Webhooks and call latency"): four modes alternating, BENCH_WEBHOOK_ROUNDS
# times each, about a minute per round once built.
BENCH_WEBHOOK_ROUNDS ?= 3
BENCH_WEBHOOK_ARGS ?= --pairs 200 --rate 500 --duration 10

# Push latency under load (bench/push.sh; docs/BENCHMARKS.md, "Push latency").
.PHONY: bench-push
bench-push: deps venv
	$(SWIFT) build -c release
	BIN=$$($(SWIFT) build -c release --show-bin-path) SERVER_CPUS="$(BENCH_SERVER_CPUS)" CLIENT_CPUS="$(BENCH_CLIENT_CPUS)" \
	  bench/push.sh

.PHONY: bench-webhooks
bench-webhooks: deps
	$(SWIFT) build -c release
	BIN=$$($(SWIFT) build -c release --show-bin-path) SERVER_CPUS="$(BENCH_SERVER_CPUS)" CLIENT_CPUS="$(BENCH_CLIENT_CPUS)" \
	  RINGBENCH_ARGS="$(BENCH_WEBHOOK_ARGS)" bench/webhooks.sh $(BENCH_WEBHOOK_ROUNDS)

# libFuzzer targets (Fuzz/, docs/TESTING.md), one after the other on one
# core, each for FUZZ_SECONDS; fails when any crashed. fuzz-smoke runs each a
# few seconds so that a broken target fails `make test`.
FUZZ_SECONDS ?= 60
.PHONY: fuzz fuzz-smoke

fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) SWIFT=$(SWIFT) Fuzz/run.sh

fuzz-smoke: deps
	FUZZ_SECONDS=3 SWIFT=$(SWIFT) Fuzz/run.sh
