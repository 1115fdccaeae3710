// Command gen writes the generated kernels of the differential tests to the
// file named by its argument (default kernels_gen.go, in the current
// directory). Package internal/difftest runs it through go generate.
package main

import (
	"log"
	"os"

	"github.com/quadrants-go/qd/internal/diffgen"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("diffgen: ")
	name := diffgen.FileName
	if len(os.Args) > 1 {
		name = os.Args[1]
	}
	src, err := diffgen.Source()
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(name, src, 0o644); err != nil {
		log.Fatal(err)
	}
}
