package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/internal/producer"
	"github.com/rackfetch/kafka-go/sasl"
	"github.com/rackfetch/kafka-go/sasl/plain"
	"github.com/rackfetch/kafka-go/sasl/scram"
)

// config is what the command line asks for.
type config struct {
	Brokers []string
	// Topics are the topics checked (-topic, comma-separated); Topic is
	// the one a single check works on.
	Topics []string
	Topic  string
	// Racks are the consumers' racks: one from -rack, several from -racks
	// (a fleet spread over them). Rack is the one a single check works on;
	// "auto" until resolveRack replaces it.
	Racks        []string
	Rack         string
	ClientSelect bool
	// MinShare is the least share of bytes read in the rack(s) that
	// passes (-min-share; 0: no gate).
	MinShare float64
	JSON     bool
	Rate     float64       // MB/s (10^6 bytes) given with -rate; 0 when not given
	Observe  time.Duration // -observe window; 0 when not given
	Price    float64       // USD per GB (10^9 bytes) charged on each side of a zone crossing
	Watch    bool
	Timeout  time.Duration

	// ProduceRate is the keyless produce rate (MB/s) of Writers in the
	// rack, or of the fleet over Racks, for the producer plan's cost (0:
	// not given); WriterMinShare is their RackMinShare (Writer semantics:
	// 0 the default, negative the guard off).
	ProduceRate    float64
	WriterMinShare float64

	TLS  *tls.Config    // nil: plaintext
	SASL sasl.Mechanism // nil: no SASL
}

// defaultPrice is the usual cloud price of inter-zone traffic: $0.01 per GB
// out of one zone and $0.01 per GB into the other.
const defaultPrice = 0.01

// parseFlags reads the command line; errors say which flag is wrong and why.
func parseFlags(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("kafka-rack", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: kafka-rack -brokers host:port[,host:port] -topic T[,T] (-rack R | -rack auto | -racks R1,R2,R3) [flags]")
		fmt.Fprintln(stderr, "Prints per partition the leader, the replica a Reader in rack R reads and why, and the cross-zone cost saved;")
		fmt.Fprintln(stderr, "then the partitions a Writer with Rack R sends its keyless messages to, and with -produce-rate the cost that saves.")
		fmt.Fprintln(stderr, "Exit status: 0 ok, 1 error, 2 bad command line, 3 below -min-share.")
		fmt.Fprintf(stderr, "The SASL password is read from -password-file or the environment variable %s.\n", passwordEnv)
		fs.PrintDefaults()
	}
	var (
		brokers, topics, racks, saslMech, user, caFile string
		password, passwordFile                         string
		useTLS, insecure                               bool
		cfg                                            = &config{}
	)
	fs.StringVar(&brokers, "brokers", "", "comma-separated bootstrap brokers (required)")
	fs.StringVar(&topics, "topic", "", "comma-separated topics to check (required)")
	fs.StringVar(&cfg.Rack, "rack", "", "the client's rack, as the brokers' broker.rack spells it, or \"auto\" to detect it (rackdetect, KAFKA_CLIENT_RACK first)")
	fs.StringVar(&racks, "racks", "", "comma-separated racks a consumer fleet is spread over, evenly: the cost and share count the whole fleet (instead of -rack)")
	fs.Float64Var(&cfg.MinShare, "min-share", 0, "exit with status 3 when the share of bytes read in the rack(s) is below this (0..1): bytes as -observe measured them, otherwise every partition weighs the same")
	fs.BoolVar(&cfg.ClientSelect, "client-select", false, "when the leader names no replica, plan the client-side selection (an in-sync replica in the rack)")
	fs.BoolVar(&cfg.JSON, "json", false, "print JSON instead of a table")
	fs.Float64Var(&cfg.Rate, "rate", 0, "consume rate of the consumers on the topics (the whole fleet with -racks), in MB/s (10^6 bytes), for the cost estimate")
	fs.DurationVar(&cfg.Observe, "observe", 0, "measure the topic's growth over this window (e.g. 1m) for the cost estimate")
	fs.Float64Var(&cfg.ProduceRate, "produce-rate", 0, "keyless produce rate of Writers in the rack (the whole fleet with -racks, an equal part from each rack), in MB/s (10^6 bytes), for the producer's cost estimate; the producer plan (the partitions a Writer with Rack uses, from the metadata alone) is printed without it too")
	fs.Float64Var(&cfg.WriterMinShare, "writer-min-share", producer.DefaultRackMinShare, "the Writers' RackMinShare for the producer plan: a rack leading too few partitions is topped up to this fraction of its fair share with partitions led elsewhere (0: the Writer's default 0.5; negative: KIP-1123's plain rule); reads and -min-share are not affected")
	fs.Float64Var(&cfg.Price, "price", defaultPrice, "USD per GB charged on each side of a cross-zone transfer")
	fs.BoolVar(&cfg.Watch, "watch", false, "run a Reader in the rack and print its routing every second until interrupted")
	fs.DurationVar(&cfg.Timeout, "timeout", 10*time.Second, "time limit of each request")
	fs.BoolVar(&useTLS, "tls", false, "connect with TLS")
	fs.StringVar(&caFile, "tls-ca", "", "PEM file of the CA that signed the brokers' certificates (implies -tls)")
	fs.BoolVar(&insecure, "tls-insecure", false, "do not verify the brokers' certificates (implies -tls)")
	fs.StringVar(&saslMech, "sasl", "", "SASL mechanism: plain, scram-sha-256 or scram-sha-512")
	fs.StringVar(&user, "user", "", "SASL user name")
	fs.StringVar(&password, "password", "", "SASL password (deprecated: it shows in ps and shell history; use -password-file or "+passwordEnv+")")
	fs.StringVar(&passwordFile, "password-file", "", "file holding the SASL password (a trailing newline is dropped)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q: every setting is a flag", fs.Arg(0))
	}
	cfg.Brokers = splitList(brokers)
	cfg.Topics = splitList(topics)
	var errs []error
	if len(cfg.Brokers) == 0 {
		errs = append(errs, errors.New("-brokers is required (host:port, comma-separated)"))
	}
	if len(cfg.Topics) == 0 {
		errs = append(errs, errors.New("-topic is required"))
	} else {
		cfg.Topic = cfg.Topics[0]
	}
	errs = append(errs, cfg.setRacks(racks)...)
	if cfg.MinShare < 0 || cfg.MinShare > 1 {
		errs = append(errs, fmt.Errorf("-min-share %g: must be a share from 0 to 1 (0.99 is 99%%)", cfg.MinShare))
	}
	if cfg.Rate < 0 {
		errs = append(errs, fmt.Errorf("-rate %g: must be 0 or more MB/s", cfg.Rate))
	}
	if cfg.Observe < 0 {
		errs = append(errs, fmt.Errorf("-observe %v: must be a positive duration", cfg.Observe))
	}
	if cfg.Rate > 0 && cfg.Observe > 0 {
		errs = append(errs, errors.New("-rate and -observe both give the consume rate: use one"))
	}
	if cfg.ProduceRate < 0 || math.IsNaN(cfg.ProduceRate) || math.IsInf(cfg.ProduceRate, 0) {
		errs = append(errs, fmt.Errorf("-produce-rate %g: must be 0 or more MB/s", cfg.ProduceRate))
	}
	if math.IsNaN(cfg.WriterMinShare) || math.IsInf(cfg.WriterMinShare, 0) {
		errs = append(errs, fmt.Errorf("-writer-min-share %g: must be a number (0.5 is half the fair share, negative turns the guard off)", cfg.WriterMinShare))
	}
	if cfg.Price < 0 {
		errs = append(errs, fmt.Errorf("-price %g: must be 0 or more USD per GB", cfg.Price))
	}
	if cfg.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("-timeout %v: must be positive", cfg.Timeout))
	}
	if useTLS || caFile != "" || insecure {
		tc, err := tlsConfig(caFile, insecure)
		if err != nil {
			errs = append(errs, err)
		}
		cfg.TLS = tc
	}
	password, given, err := readPassword(password, passwordFile, stderr)
	if err != nil {
		errs = append(errs, err)
	}
	if !given && saslMech == "" {
		password = ""
	}
	mech, err := saslMechanism(saslMech, user, password)
	if err != nil {
		errs = append(errs, err)
	}
	cfg.SASL = mech
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return cfg, nil
}

// setRacks reads -rack and -racks into Racks; with -racks, Rack is the
// first until each rack is checked in turn.
func (cfg *config) setRacks(racks string) []error {
	list := splitList(racks)
	switch {
	case cfg.Rack != "" && len(list) > 0:
		return []error{errors.New("-rack and -racks both give the client's rack: use one")}
	case len(list) > 0:
		for i, r := range list {
			if r == autoRack {
				return []error{errors.New("-racks auto: detection finds one rack; name the fleet's racks")}
			}
			for _, o := range list[:i] {
				if o == r {
					return []error{fmt.Errorf("-racks: rack %q is given twice", r)}
				}
			}
		}
		cfg.Racks, cfg.Rack = list, list[0]
	case cfg.Rack != "":
		cfg.Racks = []string{cfg.Rack}
	default:
		return []error{errors.New("-rack is required (the client's rack, e.g. an AZ ID such as use1-az1, or auto), or -racks for a fleet")}
	}
	if cfg.Watch && len(cfg.Racks) > 1 {
		return []error{errors.New("-watch runs Readers in one rack: use -rack, not -racks")}
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

func tlsConfig(caFile string, insecure bool) (*tls.Config, error) {
	tc := &tls.Config{InsecureSkipVerify: insecure, MinVersion: tls.VersionTLS12} // #nosec G402: -tls-insecure is the user's explicit choice
	if caFile == "" {
		return tc, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("-tls-ca: reading the CA file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("-tls-ca %s: no PEM certificate in the file", caFile)
	}
	tc.RootCAs = pool
	return tc, nil
}

func saslMechanism(name, user, password string) (sasl.Mechanism, error) {
	if name == "" {
		if user != "" || password != "" {
			return nil, errors.New("-user and the password need -sasl plain, scram-sha-256 or scram-sha-512")
		}
		return nil, nil
	}
	if user == "" {
		return nil, fmt.Errorf("-sasl %s needs -user", name)
	}
	switch strings.ToLower(name) {
	case "plain":
		return plain.Mechanism{Username: user, Password: password}, nil
	case "scram-sha-256":
		return scram.Mechanism(scram.SHA256, user, password)
	case "scram-sha-512":
		return scram.Mechanism(scram.SHA512, user, password)
	}
	return nil, fmt.Errorf("-sasl %q: unknown mechanism (plain, scram-sha-256 or scram-sha-512)", name)
}

// client returns a Client and a Dialer (carrying the rack) with the
// command line's connection settings.
func (cfg *config) client() (*kafka.Client, *kafka.Dialer) {
	const clientID = "kafka-rack"
	tr := &kafka.Transport{ClientID: clientID, DialTimeout: cfg.Timeout, TLS: cfg.TLS, SASL: cfg.SASL}
	cl := &kafka.Client{Addr: kafka.TCP(cfg.Brokers...), Timeout: cfg.Timeout, Transport: tr}
	d := &kafka.Dialer{ClientID: clientID, Timeout: cfg.Timeout, TLS: cfg.TLS, SASLMechanism: cfg.SASL, RackID: cfg.Rack}
	return cl, d
}
