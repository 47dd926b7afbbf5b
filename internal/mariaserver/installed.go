package mariaserver

// Installed says whether Start can find a MariaDB server's binaries
// (mariadbd and mariadb-install-db): nil, or an error wrapping
// ErrNoBinaries that says where it looked. It starts nothing.
func Installed() error {
	_, _, err := findBinaries("")
	return err
}
