// certprep's page behaviour. Loaded as a static file: the CSP allows no inline script.
"use strict";
