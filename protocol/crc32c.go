package protocol

import "hash/crc32"

// recCRC32C is the Castagnoli table of record batch (magic 2) checksums;
// legacy messages (magic 0 and 1) use IEEE CRC-32.
var recCRC32C = crc32.MakeTable(crc32.Castagnoli)
