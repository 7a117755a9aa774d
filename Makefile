# ringd — build, run and test. Every target installs the Debian packages the
# build needs first (through sudo when not root), so a fresh machine works.

SWIFT ?= swift
APT_PACKAGES := pkg-config libssl-dev zlib1g-dev libsqlite3-dev
CONFIG ?= config.json

.PHONY: all deps build run test conformance clean

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

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

conformance: deps
	$(SWIFT) build -c release --product ws-echo
	conformance/run.sh --binary .build/release/ws-echo

clean:
	rm -rf .build
