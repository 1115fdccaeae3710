// Command gen writes the generated examples of docs/kernels.md
// (examples_gen_test.go) into the current directory, from the page two
// levels up; package internal/kerneldocs runs it through go generate.
package main

import (
	"log"
	"os"
	"path/filepath"

	"github.com/quadrants-go/qd/internal/kerneldocs"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("kerneldocs: ")
	md, err := os.ReadFile(filepath.Join("..", "..", kerneldocs.Page))
	if err != nil {
		log.Fatal(err)
	}
	src, err := kerneldocs.Generate(md)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(kerneldocs.FileName, src, 0o644); err != nil {
		log.Fatal(err)
	}
}
