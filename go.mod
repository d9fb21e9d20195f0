module github.com/doclib/doclib

go 1.26.8
