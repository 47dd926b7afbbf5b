module github.com/numalab/numalab

go 1.26.8

require github.com/mattn/go-sqlite3 v1.14.52
