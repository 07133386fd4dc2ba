# kafka-go: build, test and a real Kafka cluster for the integration tests (testing/cluster/kafka-cluster).
#
#   make kafka-up / kafka-down / kafka-status   the 3-rack test cluster (KAFKA_VERSION=2.8|3.7|4.x ..., see the tool)
#   make test          unit + integration tests (starts and stops a cluster unless one is up or KAFKA_BROKERS
#                      is set), then test-race, then every fuzz target for TEST_FUZZTIME
#   make test-unit     unit tests only: -short, KAFKA_BROKERS unset
#   make test-race     the unit and fake-broker tests under the race detector (part of make test)
#   make test-matrix   the test suite once per Kafka version line in MATRIX, each on a fresh cluster
#                      (PKGS=./testing/... for the harness alone)
#   make test-rack-oldest  the rack integration tests (RACK_TESTS, in integration/) on the oldest supported line (OLDEST_KAFKA),
#                      on a fresh cluster of its own (OLDEST_STATE_DIR, ports from OLDEST_PORT_BASE), stopped after
#   make test-netfault the network fault tests (TestNetFault*, testing/netfault) on a fresh 3.7 cluster of their
#                      own with the fault proxy (KAFKA_NETFAULT=1; NETFAULT_STATE_DIR, ports from
#                      NETFAULT_PORT_BASE), stopped after
#   make bench         benchmarks
#   make bench-faults  the network fault matrix (bench/faults), this library (Reader, Conn) and franz-go, on a fresh netfault
#                      cluster of its own (FAULTS_STATE_DIR, ports from FAULTS_PORT_BASE), stopped after
#   make fuzz          every Fuzz* target for FUZZTIME
#   make example       the rack-reader example against the cluster
#   make vet           go vet, also of the nested modules (testing/containers, compat, metrics/*)
#   make docker-image  the broker images (testing/docker) of DOCKER_KAFKA's lines, from the harness's jars
#   make compose-up / compose-down   docker-compose.yml's 3-rack cluster (KAFKA_VERSION line, COMPOSE_PORT_BASE)
#   make test-containers  testing/containers' tests (a cluster per test, the harness's and rack tests against
#                      it) once per line in CONTAINERS_KAFKA; starts an installed Docker engine if none runs

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

GO ?= go
CLUSTER := testing/cluster/kafka-cluster
WITH_CLUSTER := testing/cluster/with-cluster

# One run of the whole suite, integration tests included, must end within this.
TEST_TIMEOUT ?= 30m
# Extra flags for go test in test, test-unit and test-matrix (CI passes -v to count results), and the
# packages they test.
GOTESTFLAGS ?=
PKGS ?= ./...
FUZZTIME ?= 10s
# How long `make test` runs each fuzz target.
TEST_FUZZTIME ?= 5s
# Kafka version lines for test-matrix (all run on Java 17; see testing/cluster/VERSIONS.md).
MATRIX ?= 3.7 2.8 2.7 3.9 4
# test-matrix's clusters live beside a developer's own (.kafka, ports from 29090).
MATRIX_STATE_DIR ?= $(CURDIR)/.kafka/matrix
MATRIX_PORT_BASE ?= 29190

.PHONY: all build vet kafka-up kafka-down kafka-status test test-go test-unit test-race test-matrix test-compat test-metrics bench bench-writer-rack fuzz example test-rack-oldest test-netfault

all: build

build:
	$(GO) build ./...

vet:
	$(GO) vet ./...
	cd testing/containers && $(GO) vet ./...
	cd compat && $(GO) vet ./...
	cd testing/modproxy && $(GO) vet ./...
	for m in $(METRICS_MODULES); do (cd $$m && $(GO) vet ./...); done

kafka-up:
	$(CLUSTER) up

kafka-down:
	$(CLUSTER) down

kafka-status:
	$(CLUSTER) status

# Integration results depend on the cluster, not only on the code: never take them from the test cache.
test:
	$(WITH_CLUSTER) $(MAKE) --no-print-directory test-go test-metrics
	$(MAKE) --no-print-directory test-compat
	$(MAKE) --no-print-directory test-race
	$(MAKE) --no-print-directory fuzz FUZZTIME=$(TEST_FUZZTIME)

# The API against segmentio/kafka-go's, type by type (compat/ is its own module: the library never
# depends on kafka-go).
test-compat:
	cd compat && $(GO) test -count=1 $(GOTESTFLAGS) ./...

# The metrics integrations and MSK IAM (nested modules: the library gains no dependency); the Prometheus test reads
# from the cluster, so they run inside test's cluster.
METRICS_MODULES := metrics/kafkaprom metrics/kafkaotel sasl/aws_msk_iam_v2

test-metrics:
	for m in $(METRICS_MODULES); do (cd $$m && $(GO) test -count=1 $(GOTESTFLAGS) ./...); done

# One package at a time (-p 1): the integration tests of the root and of integration/ share one cluster, and
# their recovery bounds must not measure each other's load.
test-go:
	$(GO) test -p 1 -count=1 -timeout $(TEST_TIMEOUT) $(GOTESTFLAGS) $(PKGS)

test-unit:
	env -u KAFKA_BROKERS $(GO) test -short -timeout 10m $(GOTESTFLAGS) $(PKGS)

# The race detector on the unit and fake-broker tests (-short, KAFKA_BROKERS unset: no cluster), outside
# the cluster of make test. Integration tests are left out: they skip in -short, and under the detector's
# 2-10x slowdown their timings against the real cluster would measure the detector. Not -v (CI's
# GOTESTFLAGS): the skipped integration tests would count twice in CI's summary; a race fails its test.
RACE_PKGS ?= ./...
RACE_TIMEOUT ?= 20m
RACEFLAGS ?=
test-race:
	env -u KAFKA_BROKERS $(GO) test -race -short -count=1 -timeout $(RACE_TIMEOUT) $(RACEFLAGS) $(RACE_PKGS)

test-matrix:
	@failed=""; \
	for v in $(MATRIX); do \
	  echo "=== test-matrix: Kafka $$v"; \
	  if env -u KAFKA_BROKERS KAFKA_VERSION=$$v KAFKA_STATE_DIR=$(MATRIX_STATE_DIR) \
	      KAFKA_PORT_BASE=$(MATRIX_PORT_BASE) $(WITH_CLUSTER) --fresh $(MAKE) --no-print-directory test-go; then \
	    echo "=== test-matrix: Kafka $$v: ok"; \
	  else \
	    echo "=== test-matrix: Kafka $$v: FAILED"; failed="$$failed $$v"; \
	  fi; \
	done; \
	if [ -n "$$failed" ]; then echo "test-matrix: failed on Kafka$$failed"; exit 1; fi; \
	echo "test-matrix: passed on Kafka $(MATRIX)"

# Rack-aware fetching on the oldest supported Kafka line (2.8, ZooKeeper) as well as the default,
# beside a developer's own cluster (.kafka, ports from 29090) and test-matrix's (29190): --fresh starts it
# on a new state and stops it at the end, whatever the outcome.
OLDEST_KAFKA ?= 2.8
OLDEST_STATE_DIR ?= $(CURDIR)/.kafka/oldest
OLDEST_PORT_BASE ?= 30290
RACK_TESTS ?= TestRackIntegration|TestRackFaults|TestRackClientSelection
# The package that holds them (the integration tests that need only the public API).
RACK_PKGS ?= ./integration
# Tests to leave out on the oldest line (none now: the follower-lag throttle scenario with the client's choice
# runs there too, its test accepting 2.8's throttled follower rejoining the ISR within seconds).
RACK_SKIP ?= ^$$

test-rack-oldest:
	env -u KAFKA_BROKERS KAFKA_VERSION=$(OLDEST_KAFKA) KAFKA_SELECTOR=rack KAFKA_STATE_DIR=$(OLDEST_STATE_DIR) \
	  KAFKA_PORT_BASE=$(OLDEST_PORT_BASE) $(WITH_CLUSTER) --fresh \
	  $(GO) test -count=1 -timeout $(TEST_TIMEOUT) $(GOTESTFLAGS) -run '$(RACK_TESTS)' -skip '$(RACK_SKIP)' $(RACK_PKGS)

# Network faults between the clients and one broker (testing/netfault): a cluster with the fault proxy in front
# of a client-only listener per broker, beside a developer's own (.kafka, ports from 29090), test-matrix's
# (29190) and test-rack-oldest's (30290); --fresh starts it and stops it at the end, whatever the outcome.
# KAFKA_REQUIRE_NETFAULT makes a cluster without the proxy a failure, not a skip.
NETFAULT_KAFKA ?= 3.7
NETFAULT_STATE_DIR ?= $(CURDIR)/.kafka/netfault
NETFAULT_PORT_BASE ?= 30390
NETFAULT_TESTS ?= TestNetFault
NETFAULT_PKGS ?= ./integration

test-netfault:
	env -u KAFKA_BROKERS KAFKA_VERSION=$(NETFAULT_KAFKA) KAFKA_SELECTOR=rack KAFKA_NETFAULT=1 KAFKA_REQUIRE_NETFAULT=1 \
	  KAFKA_STATE_DIR=$(NETFAULT_STATE_DIR) KAFKA_PORT_BASE=$(NETFAULT_PORT_BASE) $(WITH_CLUSTER) --fresh \
	  $(GO) test -count=1 -timeout $(TEST_TIMEOUT) $(GOTESTFLAGS) -run '$(NETFAULT_TESTS)' $(NETFAULT_PKGS)

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# A Writer with Rack "b" against the same Writer without a rack on the running cluster (source its env
# file first), alternating, six rounds: records/s and the client's CPU time per record.
bench-writer-rack:
	mkdir -p $(BENCH_OUT)
	$(GO) test -c -o $(BENCH_OUT)/integration.test ./integration/
	for i in 1 2 3 4 5 6; do $(BENCH_OUT)/integration.test -test.run '^$$' -test.bench WriterIntegrationRack -test.benchtime 300000x | grep '^Benchmark'; done

# Every Fuzz* target of every package, one after the other (go test -fuzz takes one target at a time).
fuzz:
	@n=0; \
	for pkg in $$($(GO) list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' ./...); do \
	  dir=$$($(GO) list -f '{{.Dir}}' $$pkg); \
	  grep -qs '^func Fuzz' "$$dir"/*_test.go || continue; \
	  list=$$($(GO) test -list '^Fuzz' $$pkg) || { echo "$$list"; exit 1; }; \
	  for f in $$(grep '^Fuzz' <<<"$$list" || true); do \
	    echo "fuzz: $$pkg $$f for $(FUZZTIME)"; \
	    out=$$(mktemp); \
	    if $(GO) test -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) $$pkg >$$out 2>&1; then cat $$out; \
	    elif grep -q 'context deadline exceeded' $$out && ! grep -q 'Failing input written' $$out; then \
	      sed 's/^/  fuzz: first attempt: /' $$out; \
	      echo "fuzz: $$f: go test's own deadline fired with no failing input (a toolchain timeout on a busy machine): once more"; \
	      $(GO) test -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) $$pkg || { rm -f $$out; exit 1; }; \
	    else cat $$out; rm -f $$out; exit 1; fi; \
	    rm -f $$out; \
	    n=$$((n + 1)); \
	  done; \
	done; \
	echo "fuzz: $$n target(s) run"

example:
	@if [ -d examples/rack-reader ]; then \
	  $(WITH_CLUSTER) $(GO) run ./examples/rack-reader; \
	else \
	  echo "example: examples/rack-reader does not exist yet"; \
	fi

# Decode benchmarks against franz-go and segmentio/kafka-go, in the nested module bench/ (their only user; see
# bench/RESULTS.md). One test binary holds every client; it runs BENCH_ROUNDS times with -test.count=1, so
# that each round measures all clients of a setting back to back and ratios stay paired in time on a loaded
# machine. Raw output (results.txt), load averages (load.txt) and the summaries (benchstat.txt, ratios.md) go
# to BENCH_OUT; benchstat is installed there unless BENCHSTAT names one. The end-to-end consume benchmark
# (needs KAFKA_BROKERS): BENCH_FILTER='^BenchmarkConsume$$' BENCH_FLAGS=-test.benchtime=1x.
BENCH_ROUNDS ?= 6
BENCH_OUT ?= /tmp/kafka-go-bench-peers
BENCH_FILTER ?= ^BenchmarkDecode$$
BENCH_FLAGS ?=
BENCHSTAT_COL ?= /client@(franz-go rackfetch kafka-go rackfetch-batch sarama)
BENCHSTAT_VERSION ?= v0.0.0-20260908200009-22c9c6c9d4da
BENCHSTAT ?= $(BENCH_OUT)/bin/benchstat

.PHONY: bench-peers
bench-peers:
	mkdir -p $(BENCH_OUT)
	test -x $(BENCHSTAT) || GOBIN=$(BENCH_OUT)/bin $(GO) install golang.org/x/perf/cmd/benchstat@$(BENCHSTAT_VERSION)
	cd bench && $(GO) vet ./... && $(GO) test -count=1 -run 'TestDecodersAgree' . && $(GO) test -c -o $(BENCH_OUT)/bench.test .
	: > $(BENCH_OUT)/results.txt; : > $(BENCH_OUT)/load.txt
	for i in $$(seq $(BENCH_ROUNDS)); do \
	  echo "round $$i start $$(date -u +%FT%TZ) loadavg $$(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $(BENCH_OUT)/load.txt; \
	  GOMAXPROCS=2 $(BENCH_OUT)/bench.test -test.run '^$$' -test.bench '$(BENCH_FILTER)' -test.count 1 $(BENCH_FLAGS) \
	    | tee -a $(BENCH_OUT)/results.txt; \
	done
	echo "end $$(date -u +%FT%TZ) loadavg $$(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $(BENCH_OUT)/load.txt
	$(BENCHSTAT) -col '$(BENCHSTAT_COL)' $(BENCH_OUT)/results.txt | tee $(BENCH_OUT)/benchstat.txt
	cd bench && $(GO) run ./cmd/benchratio -of rackfetch < $(BENCH_OUT)/results.txt | tee $(BENCH_OUT)/ratios.md

# The network fault matrix (bench/faults, bench/RESULTS.md): this library's rack-b group Reader, franz-go's
# kgo.Rack group consumer and a Conn user following the preferred replica, each fault on the in-rack broker's, a leader's and the group coordinator's client
# path, a window each. It starts a netfault cluster of its own (beside test-netfault's), runs the matrix and
# stops the cluster, whatever the outcome. FAULTS_FLAGS chooses (-fault-for 10s, -faults, -targets,
# -clients); the JSON lines go to FAULTS_OUT, the Markdown table to stdout and FAULTS_OUT/table.md.
FAULTS_KAFKA ?= 3.7
FAULTS_STATE_DIR ?= $(CURDIR)/.kafka/faults
FAULTS_PORT_BASE ?= 30490
FAULTS_OUT ?= /tmp/kafka-go-bench-faults
FAULTS_FLAGS ?=

.PHONY: bench-faults
bench-faults:
	mkdir -p $(FAULTS_OUT)
	cd bench && $(GO) vet ./faults ./cmd/faults && $(GO) build -o $(abspath $(FAULTS_OUT))/faults ./cmd/faults
	env -u KAFKA_BROKERS KAFKA_VERSION=$(FAULTS_KAFKA) KAFKA_SELECTOR=rack KAFKA_NETFAULT=1 \
	  KAFKA_STATE_DIR=$(FAULTS_STATE_DIR) KAFKA_PORT_BASE=$(FAULTS_PORT_BASE) $(WITH_CLUSTER) --fresh \
	  $(abspath $(FAULTS_OUT))/faults -out $(abspath $(FAULTS_OUT)) $(FAULTS_FLAGS) | tee $(FAULTS_OUT)/table.md

# The library's go.mod promises Go 1.21: build and vet it with that toolchain (fetched as a module
# through the Go module proxy on first use).
GO_MIN ?= go1.21.13
check-go-min:
	GOTOOLCHAIN=$(GO_MIN) $(GO) version
	GOWORK=off GOTOOLCHAIN=$(GO_MIN) $(GO) build ./...
	GOWORK=off GOTOOLCHAIN=$(GO_MIN) $(GO) vet ./...

.PHONY: check-go-min

# Every module installed from outside the repository, as a user gets it: a module proxy folder built from
# this tree (the root under the version the nested go.mod files require), `go get` of each into an empty
# module with an empty module cache (GOWORK=off), and a program importing each (testing/modproxy/check).
check-modules:
	testing/modproxy/check

.PHONY: check-modules

# The root module's own targets build with the versions its go.mod requires: the workspace (go.work, for the
# nested modules) would lift them to the newest any nested module requires (klauspost/compress 1.17.11 ->
# 1.20.3, bench's). Targets that cd into a nested module keep the workspace.
build test-go test-unit test-rack-oldest test-netfault bench fuzz example: export GOWORK := off

# The 3-rack cluster in Docker (testing/docker, docker-compose.yml, testing/containers). Each target starts an
# installed engine when none answers (testing/docker/dockerd; `testing/docker/dockerd stop` stops it);
# test-containers stops an engine it started. Images are rackfetch/kafka:<line>, built from the jars the
# Maven harness resolves on eclipse-temurin:17-jre, or where no registry answers on a JRE image built from
# Debian's packages (testing/docker/base-image).
DOCKERD := testing/docker/dockerd
DOCKER_KAFKA ?= 3.7
# compose-up's ports: those of `make kafka-up` (run one or the other); CONTAINERS' beside them.
COMPOSE_PORT_BASE ?= 29090
CONTAINERS_KAFKA ?= 3.7
CONTAINERS_PORT_BASE ?= 28090
# -run pattern of testing/containers' tests, and the integration tests (./integration) TestContainersCluster runs
# (default: the rack integration tests that need no second cluster; empty: none).
CONTAINERS_RUN ?= .
CONTAINERS_RACK_TESTS ?= ^TestRackIntegration(SteadyState|FollowerKilled|FollowerPaused)$$

.PHONY: docker-image compose-up compose-down test-containers

docker-image:
	@$(DOCKERD) start >/dev/null
	testing/docker/build-image $(DOCKER_KAFKA)

compose-up:
	@$(DOCKERD) start >/dev/null
	COMPOSE_PORT_BASE=$(COMPOSE_PORT_BASE) testing/docker/compose up

compose-down:
	@if $(DOCKERD) status; then COMPOSE_PORT_BASE=$(COMPOSE_PORT_BASE) testing/docker/compose down; \
	else echo "compose-down: no Docker engine answers: nothing to stop"; fi

test-containers:
	@started=$$($(DOCKERD) start); rc=0; \
	testing/docker/build-image $(CONTAINERS_KAFKA) || rc=1; \
	for v in $(CONTAINERS_KAFKA); do \
	  [ $$rc = 0 ] || break; \
	  echo "=== test-containers: rackfetch/kafka:$$v"; \
	  (cd testing/containers && env -u KAFKA_BROKERS TESTCONTAINERS_RYUK_DISABLED=true CONTAINERS_IMAGE=rackfetch/kafka:$$v \
	    CONTAINERS_PORT_BASE=$(CONTAINERS_PORT_BASE) CONTAINERS_RACK_TESTS='$(CONTAINERS_RACK_TESTS)' \
	    $(GO) test -count=1 -timeout $(TEST_TIMEOUT) $(GOTESTFLAGS) -run '$(CONTAINERS_RUN)' ./...) || rc=1; \
	done; \
	if [ -n "$$started" ]; then $(DOCKERD) stop || rc=1; fi; \
	exit $$rc
