http://a.example/ 192.0.2.7 20240301080000 text/plain 15
the first page

http://l.example/ 192.0.2.7 20240301080000 text/plain 42
claims more

http://b.example/ 192.0.2.7 20240301080000 text/plain 16
the second page

