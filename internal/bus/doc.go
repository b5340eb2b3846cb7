// Package bus is mx-claw's in-process publish/subscribe broker: one
// publisher's values fanned out to any number of subscribers, each with a
// bounded buffer of its own.
//
// The contract, which every user relies on:
//
//   - Publish never blocks. It hands the value to every subscriber whose
//     buffer has room, in publish order.
//   - A subscriber whose buffer is full when a value is published is
//     dropped: it gets no more values, its channel is closed once it has
//     drained the values already buffered, and Dropped reports true. A
//     slow reader therefore loses the tail of the stream, never a value in
//     the middle of what it received, and never slows the publisher or the
//     other subscribers.
//   - There is no "must deliver" publish. What must not be lost (the
//     stored events of a session) is in the store, numbered by sequence; a
//     dropped subscriber catches up from there and subscribes again. Live
//     values that are not stored (deltas) are lossy by design.
//
// This is crush's internal/pubsub shape (a typed Broker[T]) with the
// drop-the-slow-subscriber policy made explicit, instead of a goroutine per
// publish whose ordering nobody promises.
//
// bus imports no other mx-claw package; any package may import it.
package bus
