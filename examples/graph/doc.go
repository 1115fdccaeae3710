// Graph replays many small kernels with one call. A heat simulation on a
// small grid advances by hundreds of steps, one short kernel each: launched
// one by one, each step costs the host a launch, and on a GPU the host
// cost is most of the time. Captured once into a graph (Stream.Capture),
// the same steps run with one Graph.LaunchOn per frame. The program runs
// the frames both ways, checks both against the kernel called natively in
// plain Go, and prints the time of each.
//
//	go run ./examples/graph
package main
