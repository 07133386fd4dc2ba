// Package rackdetect finds the zone a program runs in, to use as the
// client's rack (kafka.ReaderConfig.Rack, kafka.Dialer.RackID). It is
// opt-in: the kafka package never calls it. ClientID puts the zone into a
// client id for backends that read it there (WarpStream, Inkless, Bufstream).
//
// The rack only helps when it is spelled exactly as the brokers'
// broker.rack, so the sources to ask depend on the brokers, not only on
// where the program runs:
//
//	// Amazon MSK (broker.rack is the AZ ID, use1-az4), from EKS or EC2:
//	rack, err := rackdetect.Detect(ctx, rackdetect.Kubernetes{Label: rackdetect.ZoneIDLabel}, rackdetect.EC2{})
//	// Strimzi (broker.rack is the node's topology.kubernetes.io/zone) on EKS, GKE or AKS:
//	rack, err := rackdetect.Detect(ctx, rackdetect.Kubernetes{})
//	// brokers on GCE or GKE, named by zone (europe-west1-b):
//	rack, err := rackdetect.Detect(ctx, rackdetect.Kubernetes{}, rackdetect.GCE{})
//	// brokers on Azure or AKS, named <location>-<zone> (eastus-1):
//	rack, err := rackdetect.Detect(ctx, rackdetect.Kubernetes{}, rackdetect.Azure{})
//
//	if err != nil {
//		log.Printf("no rack, reading from leaders: %v", err)
//	}
//	r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: topic, Rack: rack})
//
// What each source returns:
//
//   - EC2 returns the availability zone ID (use1-az4), never the zone name
//     (us-east-1a). AWS maps zone names to physical zones differently in
//     every account, so us-east-1a in the consumer's account may be another
//     data centre than us-east-1a in the brokers' account; IDs name the same
//     physical zone everywhere, and Amazon MSK sets broker.rack to the ID.
//     AWS_EC2_METADATA_DISABLED=true turns it off, as in the AWS SDKs.
//   - GCE returns the zone name (europe-west1-b): GCP zone names are the same
//     in every project. GCE_METADATA_HOST points it at another address, as
//     in Google's client libraries.
//   - Azure returns <location>-<logical zone> (eastus-1), the spelling AKS
//     puts in the topology.kubernetes.io/zone node label. Logical zones are
//     shuffled per subscription, like AWS zone names; for brokers in another
//     subscription, map them to physical zones with Azure.PhysicalZones.
//   - Kubernetes reads a node label that the downward API exposes to the
//     pod, as a file or an environment variable: ZoneLabel
//     (topology.kubernetes.io/zone, the zone name on every cloud, which
//     Strimzi copies into broker.rack) by default, or ZoneIDLabel
//     (topology.k8s.aws/zone-id, the AZ ID on EKS, MSK's spelling).
//
// On EKS both spellings are at hand, and the wrong one silently reads
// across zones: the zone name label for MSK finds no broker in the rack.
//
// KAFKA_CLIENT_RACK (OverrideEnv), when set, is returned by Detect before
// any source is asked; a value that is not a zone is an error
// (ErrBadOverride) rather than a reason to guess.
//
// Every source has a short timeout (DefaultTimeout) and an endpoint that
// tests can point elsewhere, and every failure is a *SourceError naming the
// source and what it was doing.
package rackdetect
