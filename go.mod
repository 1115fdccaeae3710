module github.com/quadrants-go/qd

go 1.26
