x = Math.floor(2.5)
console.log(x, Math.sqrt(2.25))
