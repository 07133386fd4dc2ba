package main

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	kafka "github.com/rackfetch/kafka-go"
)

// The broker settings rack-aware fetching needs.
const (
	configSelector  = "replica.selector.class"
	configRack      = "broker.rack"
	rackAwareSelect = "org.apache.kafka.common.replica.RackAwareReplicaSelector"
)

// BrokerCheck is one broker's metadata and rack-fetching settings.
type BrokerCheck struct {
	ID   int    `json:"id"`
	Host string `json:"host"`
	// Rack is the rack metadata gives the broker.
	Rack string `json:"rack"`
	// BrokerRack and SelectorClass are broker.rack and
	// replica.selector.class as DescribeConfigs reads them.
	BrokerRack    string `json:"broker_rack"`
	SelectorClass string `json:"replica_selector_class"`
	// FetchMaxVersion is the highest Fetch version the broker speaks (-1:
	// unknown); below 11 a fetch carries no rack.
	FetchMaxVersion int `json:"fetch_max_version"`
	// Error says why the settings could not be read.
	Error string `json:"error,omitempty"`
}

// minRackFetch is the first Fetch version that carries the client's rack.
const minRackFetch = 11

// oldFetch reports whether the broker is known to speak no rack-carrying
// Fetch.
func (b BrokerCheck) oldFetch() bool {
	return b.FetchMaxVersion >= 0 && b.FetchMaxVersion < minRackFetch
}

// selector reports whether the broker has a replica selector, or its
// setting could not be read (then its answers decide).
func (b BrokerCheck) selector() bool { return b.SelectorClass != "" || b.Error != "" }

// checkBrokers reads every broker's broker.rack and replica.selector.class
// and says what keeps rack-aware fetching from working for rack.
func checkBrokers(ctx context.Context, cl *kafka.Client, brokers []kafka.Broker, rack string) ([]BrokerCheck, []string) {
	sort.Slice(brokers, func(i, j int) bool { return brokers[i].ID < brokers[j].ID })
	out := make([]BrokerCheck, len(brokers))
	req := &kafka.DescribeConfigsRequest{}
	for i, b := range brokers {
		out[i] = BrokerCheck{ID: b.ID, Host: fmt.Sprintf("%s:%d", b.Host, b.Port), Rack: b.Rack, FetchMaxVersion: -1}
		req.Resources = append(req.Resources, kafka.DescribeConfigRequestResource{
			ResourceType: kafka.ResourceTypeBroker,
			ResourceName: strconv.Itoa(b.ID),
			ConfigNames:  []string{configSelector, configRack},
		})
	}
	var warnings []string
	resp, err := cl.DescribeConfigs(ctx, req)
	if err != nil {
		for i := range out {
			out[i].Error = err.Error()
		}
		warnings = append(warnings, fmt.Sprintf("could not read the brokers' %s and %s (DescribeConfigs): %v", configSelector, configRack, err))
	} else {
		for i := range out {
			readBrokerConfig(&out[i], resp.Resources)
		}
	}
	for i := range out {
		v, err := fetchMaxVersion(ctx, cl, out[i].Host)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("could not read the API versions of broker %d: %v", out[i].ID, err))
		}
		out[i].FetchMaxVersion = v
	}
	return out, append(warnings, brokerWarnings(out, rack)...)
}

// fetchMaxVersion asks the broker at addr for the highest Fetch version it
// speaks (-1 when it could not tell).
func fetchMaxVersion(ctx context.Context, cl *kafka.Client, addr string) (int, error) {
	resp, err := cl.ApiVersions(ctx, &kafka.ApiVersionsRequest{Addr: kafka.TCP(addr)})
	if err != nil {
		return -1, err
	}
	if resp.Error != nil {
		return -1, resp.Error
	}
	for _, k := range resp.ApiKeys {
		if k.ApiName == "Fetch" {
			return k.MaxVersion, nil
		}
	}
	return -1, fmt.Errorf("broker at %s lists no Fetch API", addr)
}

// readBrokerConfig fills bc from the DescribeConfigs result naming it.
func readBrokerConfig(bc *BrokerCheck, res []kafka.DescribeConfigResponseResource) {
	for _, r := range res {
		if r.ResourceName != strconv.Itoa(bc.ID) {
			continue
		}
		if r.Error != nil {
			bc.Error = fmt.Sprintf("DescribeConfigs of broker %d: %v", bc.ID, r.Error)
			return
		}
		for _, e := range r.ConfigEntries {
			switch e.ConfigName {
			case configSelector:
				bc.SelectorClass = e.ConfigValue
			case configRack:
				bc.BrokerRack = e.ConfigValue
			}
		}
		return
	}
	bc.Error = fmt.Sprintf("DescribeConfigs: no answer for broker %d", bc.ID)
}

// brokerWarnings says, once per cause, what keeps reads out of rack.
func brokerWarnings(brokers []BrokerCheck, rack string) []string {
	var noSelector, noRack, custom, old, racks []string
	inRack := false
	for _, b := range brokers {
		if b.Error != "" {
			continue
		}
		id := strconv.Itoa(b.ID)
		if b.SelectorClass == "" {
			noSelector = append(noSelector, id)
		} else if b.SelectorClass != rackAwareSelect {
			custom = append(custom, id+"="+b.SelectorClass)
		}
		if b.oldFetch() {
			old = append(old, fmt.Sprintf("%d (v%d)", b.ID, b.FetchMaxVersion))
		}
		if b.BrokerRack == "" && b.Rack == "" {
			noRack = append(noRack, id)
		}
		if b.Rack != "" {
			racks = append(racks, b.Rack)
		}
	}
	for _, b := range brokers {
		if b.Rack == rack {
			inRack = true
		}
	}
	var w []string
	if len(noSelector) > 0 {
		w = append(w, fmt.Sprintf("%s is unset on broker(s) %s: their leaders never name a replica to read, so a Reader reads those partitions from the leader. "+
			"Set %s=%s on every broker, or let the Reader choose on the client side with ReaderConfig.ReplicaSelector = kafka.RackAffinityReplicaSelector{}, "+
			"which reads an in-sync replica in rack %q: -client-select shows that plan",
			configSelector, strings.Join(noSelector, ", "), configSelector, rackAwareSelect, rack))
	}
	if len(custom) > 0 {
		w = append(w, fmt.Sprintf("broker(s) use a custom %s (%s): the leaders' answers below show what it picks", configSelector, strings.Join(custom, ", ")))
	}
	if len(old) > 0 {
		w = append(w, fmt.Sprintf("broker(s) %s speak Fetch below v%d (Kafka before 2.4): fetches carry no rack and only leaders serve them", strings.Join(old, ", "), minRackFetch))
	}
	if len(noRack) > 0 {
		w = append(w, fmt.Sprintf("%s is unset on broker(s) %s: no client is ever in their rack", configRack, strings.Join(noRack, ", ")))
	}
	if !inRack {
		w = append(w, fmt.Sprintf("no broker is in rack %q (brokers' racks: %s): every read crosses racks; check the spelling (AZ ID vs AZ name)", rack, strings.Join(uniq(racks), ", ")))
	}
	return w
}

func uniq(s []string) []string {
	sort.Strings(s)
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
