// Package rackdetect finds the zone a program runs in, to use as the
// client's rack (kafka.ReaderConfig.Rack, kafka.Dialer.RackID). It is
// opt-in: the kafka package never calls it.
//
//	rack, err := rackdetect.Detect(ctx, rackdetect.Kubernetes{}, rackdetect.EC2{})
//	if err != nil {
//		log.Printf("no rack, reading from leaders: %v", err)
//	}
//	r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: topic, Rack: rack})
//
// The rack only helps when it is spelled exactly as the brokers' broker.rack.
// So each source returns the spelling that brokers in the same zone use:
//
//   - EC2 returns the availability zone ID (use1-az4), never the zone name
//     (us-east-1a). AWS maps zone names to physical zones differently in
//     every account, so us-east-1a in the consumer's account may be another
//     data centre than us-east-1a in the brokers' account; IDs name the same
//     physical zone everywhere, and Amazon MSK sets broker.rack to the ID.
//   - GCE returns the zone name (europe-west1-b): GCP zone names are the same
//     in every project.
//   - Azure returns <location>-<logical zone> (eastus-1), the spelling AKS
//     puts in the topology.kubernetes.io/zone node label. Logical zones are
//     shuffled per subscription, like AWS zone names; for brokers in another
//     subscription, map them to physical zones with Azure.PhysicalZones.
//   - Kubernetes reads the topology.kubernetes.io/zone label that the
//     downward API exposes to the pod, as a file or an environment variable.
//
// Every source has a short timeout (DefaultTimeout) and an endpoint that
// tests can point elsewhere, and every failure is a *SourceError naming the
// source and what it was doing.
package rackdetect
