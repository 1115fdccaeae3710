// Pipeline is a producer/consumer on two streams ordered by events: the
// producer stream fills one of two buffers while the consumer stream works
// on the other, and neither the host nor the streams ever wait for more
// than they must.
//
//	go run ./examples/pipeline
//
// For each batch b, with slot = b % 2:
//
//	producer: wait free[slot] → produce(buf[slot], b) → record ready[slot]
//	consumer: wait ready[slot] → consume(buf[slot], out, b) → record free[slot]
//
// ready orders consume after produce; free keeps the producer from
// overwriting a buffer the consumer still reads. Both waits are on the
// device: the host only enqueues, then reads the result once.
package main
